"""Views: how results look (charts, widgets panels, notebook formatting); no model logic."""
