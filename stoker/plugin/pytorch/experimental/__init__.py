"""Experimental PyTorch integration: ``proxy`` (DALI's DataLoader proxy: a torch DataLoader's
workers hand samples to one stoker pipeline in the main process). Imports torch."""
