"""Table declarations, one module per concern. ``database.schema`` imports them all."""
