"""The semantic model: what values a program's names hold, within a file and across its project."""
