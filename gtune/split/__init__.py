"""gtune.split."""
