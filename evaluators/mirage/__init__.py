"""MIRAGE's measures: which option a system chose (``choice``) and accuracy per dataset and on
average (``scoring``). Pure; the questions come from ``evaluators.formats.mirage``."""
