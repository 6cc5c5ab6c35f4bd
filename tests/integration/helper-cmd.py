#!/usr/bin/python3
# helper-cmd.py COMMAND... -- PROGRAM ARGS...
#
# Does for a test what sbxd does for a run: queues COMMAND on a control channel (src/shared/sandbox-proto.h:
# one SOCK_SEQPACKET pair, an SBX_MSG_EXEC packet with stdin, stdout, stderr and a sealed memfd holding
# the command line, src/shared/command-fd.h), then runs PROGRAM with the helper's end of the channel as
# its standard input. PROGRAM is typically "systemd-run --pipe ... /usr/libexec/sbx/sbx-exec ...", so
# the unit's stdin is the channel, as sbxd's StandardInputFileDescriptor= makes it. The channel's other
# end stays open until PROGRAM ends (the helper may answer on it). Exits with PROGRAM's status.
import fcntl
import os
import socket
import struct
import sys

SBX_MSG_EXEC = 2
F_ADD_SEALS = 1033
F_SEAL_SEAL, F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_WRITE = 1, 2, 4, 8


def main():
    args = sys.argv[1:]
    if "--" not in args:
        sys.exit("usage: helper-cmd.py COMMAND... -- PROGRAM ARGS...")
    cut = args.index("--")
    command, program = args[:cut], args[cut + 1:]
    if not command or not program:
        sys.exit("usage: helper-cmd.py COMMAND... -- PROGRAM ARGS...")

    mfd = os.memfd_create("sbx-command", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.write(mfd, b"".join(os.fsencode(a) + b"\0" for a in command))
    fcntl.fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)
    os.lseek(mfd, 0, os.SEEK_SET)

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    # SbxExecMsg: header (type, argc, op[33], pad[7]), timeout_usec, output_max, envc, flags (no
    # terminal), tty_rows, tty_cols, pad
    msg = struct.pack("=II33s7xQQIIHHI", SBX_MSG_EXEC, len(command), b"0" * 32, 0, 0, 0, 0, 0, 0, 0)
    null = os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC)
    socket.send_fds(ours, [msg], [null, 1, 2, mfd])
    os.close(null)
    os.close(mfd)

    pid = os.fork()
    if pid == 0:
        ours.close()
        os.dup2(theirs.fileno(), 0)
        theirs.close()
        try:
            os.execvp(program[0], program)
        except OSError as e:
            print(f"helper-cmd.py: cannot run {program[0]}: {e}", file=sys.stderr)
            os._exit(127)
    theirs.close()
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status) & 0xff)


if __name__ == "__main__":
    main()
