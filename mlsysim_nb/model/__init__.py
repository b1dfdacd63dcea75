"""The model base: how a scenario declares its fields, changes them and evaluates its equations.

``fields`` (one ``knob()`` per field: its check, range, symbol, label, unit and help), ``scenario`` (the
base class every kind derives from, and ``variant()``, the one way to change a field), ``notation`` (the
symbols of the quantities the equations compute) and ``presentation`` (the typed view data a kind
declares and the renderers read). Nothing here knows a particular kind.
"""
