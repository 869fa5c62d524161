# gapscope record (loader/) — filled in by the recorder.
