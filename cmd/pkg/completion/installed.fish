complete -c pkg -n '__fish_seen_subcommand_from info files why verify remove upgrade' -f -a '(pkg list 2>/dev/null | string replace -r "\\s.*" "")'
complete -c pkg -n '__fish_seen_subcommand_from install fetch' -a '(pkg install --generate-bash-completion 2>/dev/null)'
