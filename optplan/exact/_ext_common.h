/* What the compiled parts of the offsets search share (``_search_ext.c``, ``_beam_ext.c``):
 * int64 arrays handed in as buffers, the optional ``stop`` byte, a monotonic clock and the
 * module of one function. Every helper is ``static``: each extension compiles its own copy.
 */
#ifndef OPTPLAN_EXT_COMMON_H
#define OPTPLAN_EXT_COMMON_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <time.h>

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
    Py_buffer view;
    int held;
} Array;

/* An int64 buffer of at least ``at_least`` values (``flags``: extra PyBUF_ flags, e.g.
 * PyBUF_WRITABLE), held in ``array`` (the caller releases it, on error too). */
static int get_int64(PyObject *object, Array *array, Py_ssize_t at_least, const char *name,
                     int flags)
{
    if (PyObject_GetBuffer(object, &array->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | flags) < 0)
        return -1;
    array->held = 1;
    if (array->view.itemsize != 8 || array->view.len / 8 < at_least) {
        PyErr_Format(PyExc_ValueError, "%s: expected at least %zd int64 values", name,
                     at_least);
        return -1;
    }
    return 0;
}

static int get_array(PyObject *object, Array *array, Py_ssize_t at_least, const char *name)
{
    return get_int64(object, array, at_least, name, 0);
}

/* An optional output argument: None (``array->held`` stays 0) or a writable int64 buffer of
 * at least ``at_least`` values (released here on error). */
static int get_output(PyObject *object, Array *array, Py_ssize_t at_least, const char *name)
{
    if (object == Py_None) return 0;
    if (get_int64(object, array, at_least, name, PyBUF_WRITABLE) < 0) {
        if (array->held) PyBuffer_Release(&array->view);
        array->held = 0;
        return -1;
    }
    return 0;
}

/* The ``stop`` argument: None (``*stop`` NULL) or a writable buffer of at least one byte,
 * held in ``view`` (``*stop`` its first byte; the caller releases ``view`` when ``*stop``).
 * Returns -1 with an exception set when it is neither. */
static int get_stop(PyObject *object, Py_buffer *view, const volatile char **stop)
{
    *stop = NULL;
    if (object == Py_None) return 0;
    if (PyObject_GetBuffer(object, view, PyBUF_WRITABLE) < 0) return -1;
    if (view->len < 1) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "stop: expected a writable buffer of >= 1 byte");
        return -1;
    }
    *stop = view->buf;
    return 0;
}

/* The module ``name`` (an identifier: PyInit_<name> is its init function) of docstring
 * ``doc``, with the one METH_VARARGS function ``function`` of docstring ``function_doc``. */
#define ONE_FUNCTION_MODULE(name, doc, function, function_doc)                               \
    static PyMethodDef methods[] = {                                                         \
        {#function, function, METH_VARARGS, function_doc},                                   \
        {NULL, NULL, 0, NULL},                                                               \
    };                                                                                       \
                                                                                             \
    static struct PyModuleDef module = {                                                     \
        .m_base = PyModuleDef_HEAD_INIT,                                                     \
        .m_name = #name,                                                                     \
        .m_doc = doc,                                                                        \
        .m_size = -1,                                                                        \
        .m_methods = methods,                                                                \
    };                                                                                       \
                                                                                             \
    PyMODINIT_FUNC PyInit_##name(void)                                                       \
    {                                                                                        \
        return PyModule_Create(&module);                                                     \
    }

#endif
