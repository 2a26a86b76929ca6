"""The write path of the web interface: the new-experiment and upload forms, publishing."""
