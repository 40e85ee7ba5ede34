/**
 * The process launcher's program (launcher.ts): python, because a python process is small to fork
 * and python3 is there wherever the tools run. It reads requests as lines of JSON on stdin — argv,
 * cwd, env, input — and starts each in a process group of its own inside the launcher's session,
 * with stdin from the input or /dev/null. It answers on stdout, a line of JSON each: the pid, each
 * chunk of output (base64), the exit (code or signal), and the end once both output pipes have
 * closed; or the errno when it could not start. It exits, killing its runs' groups, when stdin
 * closes, and is killed with the thread that started it (PR_SET_PDEATHSIG), which it checks once it
 * has armed that.
 *
 * Its arguments: the thread's process id, LAUNCHER_MARK, and the niceness of its session. Under
 * Linux's autogroup scheduling (on by default) the CPU is shared between sessions first, and a
 * process's own niceness counts only inside its session: code at `nice -n 10` in a session of its
 * own took as much of a busy machine as the whole runtime. So the runs stay in the launcher's
 * session (a process group each, not a new session), and a launcher for the agents' code sets its
 * session's niceness (`/proc/self/autogroup`) as it starts, trying again in the background while the
 * kernel's rate limit refuses it.
 */
export const LAUNCHER_PROGRAM = String.raw`
import base64, errno, json, os, selectors, signal, subprocess, sys, time
try:
    import ctypes
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)
except Exception:
    pass
if os.getppid() != int(sys.argv[1]):
    sys.exit(0)
niceness = int(sys.argv[3])
nice_at = time.monotonic() if niceness else None
nice_until = time.monotonic() + 30
def lower():
    global nice_at
    try:
        with open('/proc/self/autogroup', 'w') as autogroup:
            autogroup.write(str(niceness))
        nice_at = None
    except OSError as error:
        # Without CAP_SYS_ADMIN the kernel takes one such change per tenth of a second, machine-wide:
        # tried again (for 30 s, at a random moment, so launchers that collided do not collide again)
        # without holding up the runs, which the change reaches wherever they are.
        again = error.errno == errno.EAGAIN and time.monotonic() < nice_until
        nice_at = time.monotonic() + 0.1 + os.urandom(1)[0] / 2550 if again else None
if niceness:
    lower()
# The runs are process groups inside this session, so not orphaned ones, whose stop signals the kernel
# discards: ignored here, and so in every run (an ignored signal stays ignored through exec), they
# do not leave a run stopped until its timeout.
for number in (signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU):
    signal.signal(number, signal.SIG_IGN)
GROUP = {'process_group': 0} if sys.version_info >= (3, 11) else {'preexec_fn': os.setpgrp}
sel = selectors.DefaultSelector()
wake_r, wake_w = os.pipe()
os.set_blocking(wake_r, False)
os.set_blocking(wake_w, False)
signal.set_wakeup_fd(wake_w)
signal.signal(signal.SIGCHLD, lambda *_: None)
sel.register(wake_r, selectors.EVENT_READ, ('wake',))
os.set_blocking(0, False)
sel.register(0, selectors.EVENT_READ, ('requests',))
out = os.fdopen(1, 'wb')
runs = {}
def send(message):
    out.write(json.dumps(message).encode() + b'\n')
    out.flush()
def finish(rid):
    run = runs[rid]
    if run['code'] is not None and run['open'] == 0:
        del runs[rid]
        send({'id': rid, 'end': True})
def popen(request, has_input):
    argv = request['argv']
    for attempt in (argv, ['/bin/sh'] + argv):
        try:
            return subprocess.Popen(attempt, cwd=request['cwd'], env=request['env'], close_fds=True, **GROUP,
                                    stdin=subprocess.PIPE if has_input else subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as error:
            # A script without a #! line: the shell runs it, as execvp does (and Node's spawn did).
            if error.errno != errno.ENOEXEC or attempt is not argv:
                raise
def signame(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return 'SIG%d' % number
def start(request):
    rid = request['id']
    has_input = request.get('input') is not None
    try:
        data = request['input'].encode('utf-8', 'replace') if has_input else b''
        proc = popen(request, has_input)
    except OSError as error:
        send({'id': rid, 'error': errno.errorcode.get(error.errno or 0, 'EUNKNOWN'), 'message': str(error)})
        return
    except Exception as error:
        send({'id': rid, 'error': 'EINVAL', 'message': str(error)})
        return
    runs[rid] = {'proc': proc, 'open': 2, 'code': None}
    send({'id': rid, 'pid': proc.pid})
    for stream, fd in ((proc.stdout, 1), (proc.stderr, 2)):
        os.set_blocking(stream.fileno(), False)
        sel.register(stream.fileno(), selectors.EVENT_READ, ('output', rid, fd, stream))
    if has_input:
        os.set_blocking(proc.stdin.fileno(), False)
        sel.register(proc.stdin.fileno(), selectors.EVENT_WRITE, ('input', rid, [memoryview(data)], proc.stdin))
def reap():
    for rid, run in list(runs.items()):
        if run['code'] is None and run['proc'].poll() is not None:
            code = run['proc'].returncode
            run['code'] = code
            send({'id': rid, 'exit': code if code >= 0 else None, 'signal': signame(-code) if code < 0 else None})
            finish(rid)
def handle(key):
    global line
    kind = key.data[0]
    if kind == 'wake':
        try:
            os.read(wake_r, 4096)
        except BlockingIOError:
            pass
    elif kind == 'requests':
        try:
            chunk = os.read(0, 1 << 20)
        except BlockingIOError:
            return
        if not chunk:
            for run in runs.values():
                try:
                    os.killpg(run['proc'].pid, signal.SIGKILL)
                except OSError:
                    pass
            sys.exit(0)
        while True:
            end = chunk.find(b'\n')
            if end < 0:
                line.append(chunk)
                break
            line.append(chunk[:end])
            raw, line = b''.join(line), []
            chunk = chunk[end + 1:]
            try:
                start(json.loads(raw))
            except Exception:
                pass
    elif kind == 'output':
        _, rid, fd, stream = key.data
        try:
            data = os.read(stream.fileno(), 65536)
        except BlockingIOError:
            return
        if data:
            send({'id': rid, 'fd': fd, 'data': base64.b64encode(data).decode()})
        else:
            sel.unregister(stream.fileno())
            stream.close()
            runs[rid]['open'] -= 1
            finish(rid)
    elif kind == 'input':
        _, rid, left, stream = key.data
        try:
            written = os.write(stream.fileno(), left[0])
            left[0] = left[0][written:]
        except BlockingIOError:
            return
        except OSError:
            left[0] = b''
        if not left[0]:
            sel.unregister(stream.fileno())
            stream.close()
line = []
send({'ready': True})
while True:
    for key, _ in sel.select(None if nice_at is None else max(0, nice_at - time.monotonic())):
        try:
            handle(key)
        except SystemExit:
            raise
        except Exception:
            # One bad request or stream must not end every run of the thread.
            pass
    if nice_at is not None and time.monotonic() >= nice_at:
        lower()
    reap()
`;

/** The launcher's last argument: what `ps` shows, and how the scale benchmark finds a host's launchers. */
export const LAUNCHER_MARK = 'autoteam-launcher';

