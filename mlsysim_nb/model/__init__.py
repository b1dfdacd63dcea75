"""The model base: how a scenario declares its fields, changes them and evaluates its equations.

``knob`` (a field's one declaration: its check, range, symbol, unit, label, help and control) over
``fields`` (the checkers), ``notation`` (how a quantity is written; the records' rows), ``equations``
(a kind's physics as a value), ``evaluator`` (magnitudes, formulas, units), ``changes`` (``variant()``,
the one way to change a field, and the couplings between fields), ``scenario`` (the base class every kind
derives from), ``defaults`` and ``protocol`` (the default presentation, and the typed face a view reads)
and ``presentation`` (the view data a kind declares and the renderers read). Nothing here knows a
particular kind.
"""
