tmux -L t71 kill-server 2>/dev/null
tmux -L t71 new-session -d -x 100 -y 30 -s s "echo before; sbxctl run -- bash -c 'stty size; tty; echo TERM=\$TERM; exit 3'; echo RC=\$?; sleep 30"
sleep 5
tmux -L t71 capture-pane -p -t s | grep -v '^$'
tmux -L t71 kill-server
