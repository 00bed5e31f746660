"""Models built on the public API; each module may be a bench plug-in (NAME, cases...)."""
