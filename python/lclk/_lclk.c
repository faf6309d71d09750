// SPDX-License-Identifier: GPL-2.0
/*
 * lclk._lclk: /dev/lclkN for Python, over include/lclk.h. A reading is the
 * header's lclk_now(): the mapped page and the vDSO, no system call. What
 * the C reader leaves to its caller is done here: a closed clock raises
 * instead of touching a page that is gone, and errors become OSError with
 * the errno text and the path.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <string.h>

#include "lclk.h"

/* ---- lclk.Now: one reading ------------------------------------------- */

/*
 * A plain object with C fields, not a tuple: building five ints per call
 * would cost more than the reading. Fields become ints when they are read.
 */
typedef struct {
	PyObject_HEAD
	struct lclk_now now;
} NowObject;

static PyTypeObject NowType;

static PyObject *now_new(const struct lclk_now *n)
{
	NowObject *o = PyObject_New(NowObject, &NowType);

	if (o)
		o->now = *n;
	return (PyObject *)o;
}

static PyMemberDef now_members[] = {
	{ "time_ns", T_LONGLONG, offsetof(NowObject, now.time_ns), READONLY,
	  "Logical time, ns." },
	{ "bound_ns", T_LONGLONG, offsetof(NowObject, now.bound_ns), READONLY,
	  "Error bound, ns; BOUND_UNKNOWN while the clock was never synced." },
	{ "base_ns", T_LONGLONG, offsetof(NowObject, now.base_ns), READONLY,
	  "CLOCK_MONOTONIC (time.monotonic_ns()) the reading is for." },
	{ "status", T_UINT, offsetof(NowObject, now.status), READONLY,
	  "STATUS_UNSYNCED, STATUS_SYNCED, STATUS_HOLDOVER or STATUS_DISRUPTED." },
	{ "cpu", T_INT, offsetof(NowObject, now.cpu), READONLY,
	  "CPU whose per-CPU offset was applied, -1 if none." },
	{ NULL }
};

static PyObject *now_seconds(PyObject *self, void *closure)
{
	return PyFloat_FromDouble(((NowObject *)self)->now.time_ns / 1e9);
}

static PyObject *now_bound_known(PyObject *self, void *closure)
{
	return PyBool_FromLong(((NowObject *)self)->now.bound_ns != LCLK_BOUND_UNKNOWN);
}

static PyGetSetDef now_getset[] = {
	{ "seconds", now_seconds, NULL,
	  "Logical time in seconds, as a float (ns resolution is lost).", NULL },
	{ "bound_known", now_bound_known, NULL,
	  "False while the clock was never synced (bound_ns is BOUND_UNKNOWN).", NULL },
	{ NULL }
};

static const char *status_name(__u32 status)
{
	switch (status) {
	case LCLK_STATUS_UNSYNCED: return "unsynced";
	case LCLK_STATUS_SYNCED: return "synced";
	case LCLK_STATUS_HOLDOVER: return "holdover";
	case LCLK_STATUS_DISRUPTED: return "disrupted";
	}
	return "unknown";
}

static PyObject *now_repr(PyObject *self)
{
	const struct lclk_now *n = &((NowObject *)self)->now;

	if (n->bound_ns == LCLK_BOUND_UNKNOWN)
		return PyUnicode_FromFormat("lclk.Now(time_ns=%lld, bound_ns=unknown, status=%s)",
					    (long long)n->time_ns, status_name(n->status));
	return PyUnicode_FromFormat("lclk.Now(time_ns=%lld, bound_ns=%lld, status=%s)",
				    (long long)n->time_ns, (long long)n->bound_ns,
				    status_name(n->status));
}

static PyTypeObject NowType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "lclk.Now",
	.tp_basicsize = sizeof(NowObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A reading of an lclk clock: logical time, its error bound and status.",
	.tp_repr = now_repr,
	.tp_members = now_members,
	.tp_getset = now_getset,
};

/* ---- lclk.Clock ------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	/*
	 * c.fd < 0: closed (or never opened). Not c.page == NULL: in a time
	 * namespace that shifts CLOCK_MONOTONIC an open clock has no page.
	 */
	struct lclk_clock c;
	PyObject *path;		/* str */
} ClockObject;

static int clock_init(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "path", NULL };
	ClockObject *c = (ClockObject *)self;
	PyObject *path = NULL, *bytes;
	int err;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O&:Clock", kwlist,
					 PyUnicode_FSDecoder, &path))
		return -1;
	if (!path)
		path = PyUnicode_FromString("/dev/lclk0");
	if (!path)
		return -1;
	bytes = PyUnicode_EncodeFSDefault(path);
	if (!bytes) {
		Py_DECREF(path);
		return -1;
	}
	/* __init__ called twice: let go of the first mapping. */
	lclk_close(&c->c);
	Py_XSETREF(c->path, path);
	Py_BEGIN_ALLOW_THREADS
	err = lclk_open(&c->c, PyBytes_AS_STRING(bytes));
	Py_END_ALLOW_THREADS
	Py_DECREF(bytes);
	if (err) {
		errno = -err;
		PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, path);
		return -1;
	}
	return 0;
}

static PyObject *clock_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
	ClockObject *c = (ClockObject *)type->tp_alloc(type, 0);

	if (c) {
		c->c.fd = -1;
		c->c.page = NULL;
	}
	return (PyObject *)c;
}

static void clock_dealloc(PyObject *self)
{
	ClockObject *c = (ClockObject *)self;

	lclk_close(&c->c);
	Py_XDECREF(c->path);
	Py_TYPE(self)->tp_free(self);
}

/* The clock if it is open, or NULL with ValueError set. */
static const struct lclk_clock *open_clock(ClockObject *c)
{
	if (__builtin_expect(c->c.fd < 0, 0)) {
		PyErr_SetString(PyExc_ValueError, "lclk: operation on a closed clock");
		return NULL;
	}
	return &c->c;
}

static PyObject *clock_now(PyObject *self, PyObject *unused)
{
	const struct lclk_clock *c = open_clock((ClockObject *)self);
	struct lclk_now n;

	if (!c)
		return NULL;
	lclk_now(c, &n);
	return now_new(&n);
}

static PyObject *clock_now_ns(PyObject *self, PyObject *unused)
{
	const struct lclk_clock *c = open_clock((ClockObject *)self);
	struct lclk_now n;

	if (!c)
		return NULL;
	lclk_now(c, &n);
	return PyLong_FromLongLong(n.time_ns);
}

static PyObject *clock_from_monotonic(PyObject *self, PyObject *const *args,
				      Py_ssize_t nargs)
{
	const struct lclk_clock *c = open_clock((ClockObject *)self);
	long long base, cpu = -1;
	struct lclk_now n;

	if (!c)
		return NULL;
	if (nargs < 1 || nargs > 2) {
		PyErr_SetString(PyExc_TypeError,
				"from_monotonic(ns, cpu=-1) takes 1 or 2 arguments");
		return NULL;
	}
	base = PyLong_AsLongLong(args[0]);
	if (base == -1 && PyErr_Occurred())
		return NULL;
	if (nargs == 2) {
		cpu = PyLong_AsLongLong(args[1]);
		if (cpu == -1 && PyErr_Occurred())
			return NULL;
		if (cpu < -1 || cpu > INT32_MAX) {
			PyErr_SetString(PyExc_ValueError, "cpu out of range");
			return NULL;
		}
	}
	lclk_from_base(c, base, (__s32)cpu, &n);
	return now_new(&n);
}

static PyObject *clock_info(PyObject *self, PyObject *unused)
{
	const struct lclk_clock *c = open_clock((ClockObject *)self);
	struct lclk_info info;

	if (!c)
		return NULL;
	if (ioctl(c->fd, LCLK_IOC_INFO, &info) < 0)
		return PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError,
							    ((ClockObject *)self)->path);
	return Py_BuildValue("{s:I,s:I,s:I,s:I,s:i,s:I,s:L,s:I,s:O,s:O,s:O}",
			     "abi_version", info.abi_version,
			     "caps", info.caps,
			     "index", info.index,
			     "ncpus", info.ncpus,
			     "phc_index", info.phc_index,
			     "mmap_size", info.mmap_size,
			     "max_rate_ppt", (long long)info.max_rate_ppt,
			     "max_drift_ppb", info.max_drift_ppb,
			     "mmap", info.caps & LCLK_CAP_MMAP ? Py_True : Py_False,
			     "phc", info.caps & LCLK_CAP_PHC ? Py_True : Py_False,
			     "cpu_offset", info.caps & LCLK_CAP_CPU_OFFSET ? Py_True : Py_False);
}

static PyObject *clock_close(PyObject *self, PyObject *unused)
{
	lclk_close(&((ClockObject *)self)->c);
	Py_RETURN_NONE;
}

static PyObject *clock_enter(PyObject *self, PyObject *unused)
{
	if (!open_clock((ClockObject *)self))
		return NULL;
	return Py_NewRef(self);
}

static PyObject *clock_exit(PyObject *self, PyObject *args)
{
	return clock_close(self, NULL);
}

static PyObject *clock_closed(PyObject *self, void *closure)
{
	return PyBool_FromLong(((ClockObject *)self)->c.fd < 0);
}

static PyObject *clock_fileno(PyObject *self, PyObject *unused)
{
	const struct lclk_clock *c = open_clock((ClockObject *)self);

	return c ? PyLong_FromLong(c->fd) : NULL;
}

static PyObject *clock_repr(PyObject *self)
{
	ClockObject *c = (ClockObject *)self;

	return PyUnicode_FromFormat("lclk.Clock(%R%s)", c->path ? c->path : Py_None,
				    c->c.fd >= 0 ? "" : ", closed");
}

static PyMethodDef clock_methods[] = {
	{ "now", clock_now, METH_NOARGS,
	  "now($self, /)\n--\n\nNow: logical time, bound and status, read from the mapped page "
	  "(no system call)." },
	{ "now_ns", clock_now_ns, METH_NOARGS,
	  "now_ns($self, /)\n--\n\nint: logical time in ns alone, as time.monotonic_ns() gives "
	  "monotonic time." },
	{ "from_monotonic", (PyCFunction)(void (*)(void))clock_from_monotonic, METH_FASTCALL,
	  "from_monotonic($self, ns, cpu=-1, /)\n--\n\nNow: convert a time.monotonic_ns() timestamp "
	  "with the current model; cpu >= 0 applies that CPU's offset." },
	{ "info", clock_info, METH_NOARGS,
	  "info($self, /)\n--\n\ndict: the instance's LCLK_IOC_INFO: index, capabilities, limits." },
	{ "fileno", clock_fileno, METH_NOARGS, "fileno($self, /)\n--\n\nint: the open descriptor." },
	{ "close", clock_close, METH_NOARGS,
	  "close($self, /)\n--\n\nUnmap and close; further calls raise ValueError. Idempotent." },
	{ "__enter__", clock_enter, METH_NOARGS, "__enter__($self, /)\n--\n\nThe clock itself." },
	{ "__exit__", clock_exit, METH_VARARGS,
	  "__exit__($self, exc_type, exc, tb, /)\n--\n\nclose()." },
	{ NULL }
};

static PyGetSetDef clock_getset[] = {
	{ "closed", clock_closed, NULL, "True after close().", NULL },
	{ NULL }
};

static PyMemberDef clock_members[] = {
	{ "path", T_OBJECT, offsetof(ClockObject, path), READONLY, "The device path." },
	{ NULL }
};

static PyTypeObject ClockType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "lclk.Clock",
	.tp_basicsize = sizeof(ClockObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "Clock(path='/dev/lclk0')\n--\n\nAn lclk instance, opened and mapped read-only. "
		  "Raises OSError (FileNotFoundError without the module) on failure.",
	.tp_new = clock_new,
	.tp_init = clock_init,
	.tp_dealloc = clock_dealloc,
	.tp_repr = clock_repr,
	.tp_methods = clock_methods,
	.tp_getset = clock_getset,
	.tp_members = clock_members,
};

/* ---- module ----------------------------------------------------------- */

static struct PyModuleDef lclk_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "lclk._lclk",
	.m_doc = "The C half of lclk: Clock and Now over include/lclk.h.",
	.m_size = -1,
};

PyMODINIT_FUNC PyInit__lclk(void)
{
	PyObject *m, *unknown;

	if (PyType_Ready(&NowType) < 0 || PyType_Ready(&ClockType) < 0)
		return NULL;
	m = PyModule_Create(&lclk_module);
	if (!m)
		return NULL;
	if (PyModule_AddObjectRef(m, "Now", (PyObject *)&NowType) < 0 ||
	    PyModule_AddObjectRef(m, "Clock", (PyObject *)&ClockType) < 0 ||
	    PyModule_AddIntConstant(m, "STATUS_UNSYNCED", LCLK_STATUS_UNSYNCED) < 0 ||
	    PyModule_AddIntConstant(m, "STATUS_SYNCED", LCLK_STATUS_SYNCED) < 0 ||
	    PyModule_AddIntConstant(m, "STATUS_HOLDOVER", LCLK_STATUS_HOLDOVER) < 0 ||
	    PyModule_AddIntConstant(m, "STATUS_DISRUPTED", LCLK_STATUS_DISRUPTED) < 0 ||
	    !(unknown = PyLong_FromLongLong(LCLK_BOUND_UNKNOWN)))
		goto fail;
	if (PyModule_AddObject(m, "BOUND_UNKNOWN", unknown) < 0) {
		Py_DECREF(unknown);
		goto fail;
	}
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
