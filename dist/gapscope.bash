# bash completion for gapscope: its commands, each command's options (from its own --help, so
# they never drift), process ids after -p, a command line after record's --, files elsewhere.
_gapscope()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local gs=${COMP_WORDS[0]} cmd=${COMP_WORDS[1]} i opts

	COMPREPLY=()
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "record script report diff help --help --version" -- "$cur"))
		return
	fi
	if [ "$cmd" = help ]; then
		[ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "record script report diff" -- "$cur"))
		return
	fi
	case $cmd in
	record | script | report | diff) ;;
	*) return ;;
	esac
	for ((i = 2; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = "--" ]; then # the recorded command line
			if [ $((i + 1)) -eq "$COMP_CWORD" ]; then
				COMPREPLY=($(compgen -c -- "$cur"))
			else
				COMPREPLY=($(compgen -f -- "$cur"))
			fi
			return
		fi
	done
	case $prev in
	-p | --pid)
		COMPREPLY=($(compgen -W "$(ps -eo pid= 2>/dev/null)" -- "$cur"))
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		opts=$("$gs" "$cmd" --help 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u)
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _gapscope gapscope
