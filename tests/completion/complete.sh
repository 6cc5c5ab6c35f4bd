# tests/completion/complete.sh - drives a bash completion function as bash does when TAB is pressed
# at the end of a command line (sourced by test-completion.sh and tests/integration/test-85-completion.sh).
# shellcheck shell=bash
#
#   sbx_complete FUNC LINE   sets COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT the way bash would,
#                            calls FUNC COMMAND CUR PREV and leaves its COMPREPLY
#   sbx_reply                prints COMPREPLY sorted, on one line, separated by single spaces
#   SBX_COMPOPT              what the completion asked of compopt (e.g. "-o nospace"), one per entry
#
# Words are split at blanks, and "=" is a word of its own, as with bash's default COMP_WORDBREAKS
# ("--profile=co" is "--profile" "=" "co"; at "--profile=" the word at the cursor is "="). Quoting is
# not modelled: the lines of the tests have none.

# The builtin compopt works only in a completion that bash itself started: record the requests.
compopt() { SBX_COMPOPT+=("$*"); }

sbx_complete() {
  local func=$1 line=$2 w
  local -a parts
  COMP_WORDS=()
  read -ra parts <<< "$line"
  for w in "${parts[@]}"; do
    while [[ $w == *=* ]]; do
      [[ -n ${w%%=*} ]] && COMP_WORDS+=("${w%%=*}")
      COMP_WORDS+=("=")
      w=${w#*=}
    done
    [[ -n $w ]] && COMP_WORDS+=("$w")
  done
  if [[ $line == *" " || ${#COMP_WORDS[@]} -eq 0 ]]; then
    COMP_WORDS+=("")
  fi
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE=$line
  COMP_POINT=${#line}
  COMP_TYPE=9
  COMP_KEY=9
  COMPREPLY=()
  SBX_COMPOPT=()
  "$func" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]:-}"
}

sbx_reply() {
  ((${#COMPREPLY[@]} > 0)) || return 0
  printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort | paste -sd ' ' -
}
