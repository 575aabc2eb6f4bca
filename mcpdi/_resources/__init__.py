"""Resources: compiling a resource or template, reading it, its URI templates and its security checks."""
