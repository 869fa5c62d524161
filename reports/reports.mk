# gapscope report/script (reports/) — filled in by the reporter.
