"""Rendering: a scenario's derivation as data, and its renderings as text, Markdown, HTML and charts.

``derivation`` builds the data (inputs, equations with numbers substituted, verdict); ``numbers`` formats
quantities; ``plain`` holds the strings every rendering shares (visible escapes, one-line text, a section's
summary line); ``text`` and ``html`` render the same derivation, neither importing the other; ``charts``
draws the memory bar and ``figures`` the course's pictures (ZeRO partitions, pipeline timelines, memory
over one step); ``display`` is the mixin that gives every scenario its ``_repr_*_`` methods. Nothing
here asks which kind it shows.
"""
