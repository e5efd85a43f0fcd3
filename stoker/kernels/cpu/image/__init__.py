"""Image operators: decoders, geometry, resampling, color, filters, noise, masks."""
