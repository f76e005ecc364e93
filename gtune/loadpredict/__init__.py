"""gtune.loadpredict."""
