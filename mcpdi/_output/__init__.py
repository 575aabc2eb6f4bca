"""Tool output: the schema a return annotation publishes and the content a returned value becomes."""
