set -x
sbxctl run -T -- sh -c 'echo plain; ls -l /dev/pts /dev/ptmx' ; echo rc=$?
tmux -L t71 kill-server 2>/dev/null
tmux -L t71 new-session -d -x 100 -y 30 -s s "sbxctl run -- bash -c 'stty size; tty; ps -o tty= -p \$\$; ls /dev/pts; echo TERM=\$TERM; sleep 3; exit 3'; echo RC=\$?; sleep 30"
sleep 6
tmux -L t71 capture-pane -p -t s
tmux -L t71 kill-server
journalctl -n 30 --no-pager | grep -i "sbx\|space" | tail -15
