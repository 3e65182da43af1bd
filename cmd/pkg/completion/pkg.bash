# bash completion for pkg
_pkg() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	local args=("${COMP_WORDS[@]:1:COMP_CWORD-1}")
	case $cur in
	--) args+=(-) ;; # a long flag begun: "--" would end pkg's flags, "-" asks for them all
	-*) args+=("$cur") ;;
	esac
	local IFS=$'\n'
	COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" "${args[@]}" --generate-bash-completion 2>/dev/null)" -- "$cur"))
}
complete -o default -F _pkg pkg
