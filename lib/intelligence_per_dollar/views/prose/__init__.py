"""Sentences of the chapters, built from computed values: one module per chapter.

Every function takes results the analysis and model layers computed (dataclasses, tables, typed
records) and returns Markdown (or, for table labels, a display DataFrame). No model logic lives
here and no number is typed in that a parameter or the data can change; a chapter shows a
sentence with ``md(prose.<chapter>.<sentence>(result))``. Fixed text (questions, equations,
takeaways that quote no number) stays in the chapter's Markdown cells.
"""
