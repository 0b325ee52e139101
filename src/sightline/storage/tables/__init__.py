"""Table declarations, one module per concern. ``storage.schema`` imports them all."""
