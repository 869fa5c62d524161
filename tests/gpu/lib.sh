# What the tests/gpu scripts begin with, sourced from the repository root with BUILD and OUT
# set: GS (the carried portable build), OUT created, every line of output also in OUT/log.txt,
# tracefs mounted, OUT/table.txt emptied, say (a line to the table and the log) and the
# machine's line first in the table.
GS=$PWD/$BUILD/gapscope-portable
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T || true
table=$OUT/table.txt
: >"$table"
say() { echo "$*" | tee -a "$table"; }
say "== $(uname -r), $(nproc) CPUs, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"

# torch_stall SECONDS FILE: tests/gpu/progs/torch_stall.py running for SECONDS, its pid in TPID
# once its loop runs, its later lines into FILE. Exits with a line in the table if it does not
# start (or PyTorch has no GPU here).
torch_stall() {
	local line
	python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null ||
		{ say "no PyTorch with CUDA: nothing run"; exit 1; }
	coproc TORCH { exec python3 tests/gpu/progs/torch_stall.py "$1"; }
	TPID=$TORCH_PID
	read -r -t 180 line <&"${TORCH[0]}" || line=
	case $line in ready*) ;; *) say "the PyTorch loop did not start"; kill $TPID; exit 1 ;; esac
	# A coproc's fds are not a background job's: the output read through a copy.
	exec {tout}<&"${TORCH[0]}"
	cat <&$tout >"$2" &
}
