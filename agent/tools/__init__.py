"""Tools for the model: the registry (`registry`), and the pluggable memory and wellness
toolkits (`memory_tools`, `wellness`)."""
