import os, pty, sys, select, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out=b""; end=time.time()+20
while time.time()<end:
    r,_,_=select.select([fd],[],[],0.5)
    if r:
        try: d=os.read(fd,4096)
        except OSError: break
        if not d: break
        out+=d
print(repr(out)); print("status", os.waitstatus_to_exitcode(os.waitpid(pid,0)[1]))
