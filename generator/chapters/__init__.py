"""One module per chapter, named after its page; each declares CHAPTER (see generator/chapter.py)."""
