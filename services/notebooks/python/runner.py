"""Executes one notebook on a Jupyter kernel and writes the executed copy.

Usage: runner.py <source.ipynb> <executed.ipynb> <cell_timeout_seconds>

Runs inside the run's sandbox (services/notebooks/sandbox.ts). Writes JSON lines on fd 3, the
service's private pipe: first {"kernel_pid": N}, last {"status": "succeeded"} or {"status":
"failed", "error": "<ename>: <evalue>"}. The kernel does not inherit fd 3 (subprocess closes it)
and cannot open it through /proc (this process makes itself non-dumpable), so the notebook's code
cannot write the run's outcome. The pid matters only where the run has no pid namespace of its
own (the `pod` sandbox); there the service kills the kernel's session if it is the run's uid's.

When IMS_API_SOCKET names the owner's API door (a Unix socket of the notebooks service, bound
into the sandbox), a forwarder on the sandbox's own loopback carries it, so that the kernel reads
the API with Python's standard library at IMS_API_URL: the sandbox has no other network.
"""
import json
import os
import socket
import sys
import threading


STATUS = None


def say(line):
    STATUS.write(json.dumps(line) + "\n")
    STATUS.flush()


def private():
    """fd 3 to the service, and /proc/<this pid> closed to the kernel (same uid): PR_SET_DUMPABLE 0."""
    global STATUS
    STATUS = os.fdopen(3, "w", closefd=True)
    os.set_inheritable(3, False)
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def pipe(src, dst):
    try:
        while True:
            chunk = src.recv(65536)
            if not chunk:
                break
            dst.sendall(chunk)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve_api_door(socket_path):
    """Listens on 127.0.0.1 (any free port) and joins each connection to the door's socket; returns the URL."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)

    def accept():
        while True:
            client, _ = listener.accept()
            door = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                door.connect(socket_path)
            except OSError:
                client.close()
                door.close()
                continue
            threading.Thread(target=pipe, args=(client, door), daemon=True).start()
            threading.Thread(target=pipe, args=(door, client), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return "http://127.0.0.1:%d" % listener.getsockname()[1]


def memory_error(ename):
    return ename in ("MemoryError", "DeadKernelError")


def main():
    source, executed, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3])
    door = os.environ.pop("IMS_API_SOCKET", None)
    if door:
        os.environ["IMS_API_URL"] = serve_api_door(door)
    import nbformat
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    nb = nbformat.read(source, as_version=4)
    cwd = os.path.dirname(os.path.abspath(source))
    # Our notebooks are Python ones: the kernel is the python3 one of this interpreter's installation.
    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=cwd)
    say({"kernel_pid": km.provisioner.pid})
    client = NotebookClient(nb, km=km, timeout=timeout, allow_errors=False, resources={"metadata": {"path": cwd}})
    status, error = "succeeded", None
    try:
        try:
            client.execute()
        finally:
            km.shutdown_kernel(now=True)
    except CellExecutionError as e:
        ename = getattr(e, "ename", "") or "Error"
        evalue = getattr(e, "evalue", "") or ""
        status, error = "failed", (f"{ename}: {evalue}" if evalue else ename)
    except CellTimeoutError:
        status, error = "failed", f"A cell ran longer than {timeout} s"
    except DeadKernelError:
        # The kernel was killed under it: the memory limit's OOM kill, which the service tells apart.
        status, error = "failed", "DeadKernelError: the kernel died"
    tmp = executed + ".tmp"
    nbformat.write(nb, tmp)
    os.replace(tmp, executed)
    say({"status": status, "error": error} if error else {"status": status})


if __name__ == "__main__":
    private()
    try:
        main()
    except Exception as e:  # any other fault is the run's error, never a traceback on the wire
        say({"status": "failed", "error": f"{type(e).__name__}: {e}"})
        sys.exit(1)
