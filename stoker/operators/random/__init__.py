"""Random operators: per-sample random values drawn from the sample's own stream."""
