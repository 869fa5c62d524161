// index.html script: written next.
