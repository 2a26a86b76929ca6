"""Jinja2 templates and static assets of the web pages (used only by ``server``)."""
