/* The protobuf encoder of proto/kube.py for the common case, in C.
 *
 * kube.py compiles a plan per message (_Plan, _Field); compile() copies one plan tree into
 * the C structures below, and encode() writes an object by it exactly as kube.py's
 * encode() does, byte for byte. Whatever this encoder does not take on itself it
 * declines (encode() returns None) and kube.py encodes the object: a value
 * that does not fit its field (kube.py then names it in its error), bytes fields (base64),
 * a Quantity given as a number, nesting deeper than MAX_DEPTH. A decline costs the work
 * done until then; none happens for the objects the server writes. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* kube.py's field kinds and special messages (_STRING..._MAP, _PLAIN..._LIST_K) */
enum { K_STRING, K_BYTES, K_BOOL, K_INT32, K_INT64, K_MESSAGE, K_MAP };
enum { S_PLAIN, S_QUANTITY, S_INT_OR_STRING, S_TIME, S_MICRO_TIME, S_RAW, S_LIST };

#define MAX_DEPTH 100
#define OK 0
#define DECLINE 1
#define FAIL (-1) /* a Python exception is set (memory) */

typedef struct Plan Plan;

typedef struct {
    PyObject *key; /* the JSON key (str) */
    unsigned char tag[10];
    Py_ssize_t tag_len;
    int kind, value_kind, repeated, presence, is_inline, single_string;
    Plan *sub;
} Field;

struct Plan {
    int special, metadata;
    Py_ssize_t nfields;
    Field *fields;
    PyObject *by_key; /* JSON key -> index in fields; NULL when a field is inline */
    PyObject *keys;   /* every JSON key of the message (frozenset) */
};

static PyObject *registry;     /* kube.py's _Plan -> capsule of its Plan */
static PyObject *times;        /* kube.py's cache: a time string -> its message */
static PyObject *time_bytes;   /* a time string -> its message, filling that cache */
static PyObject *encode_json;  /* a JSON value -> its text (api/codec.py) */
static PyObject *api_version_key, *kind_key;

/* --- output ----------------------------------------------------------------------------- */

typedef struct {
    char *data;
    Py_ssize_t len, cap;
} Buf;

static int reserve(Buf *b, Py_ssize_t more) {
    if (b->len + more <= b->cap)
        return OK;
    Py_ssize_t cap = b->cap * 2;
    if (cap < b->len + more)
        cap = b->len + more + 256;
    char *data = PyMem_Realloc(b->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return FAIL;
    }
    b->data = data;
    b->cap = cap;
    return OK;
}

static int put(Buf *b, const void *src, Py_ssize_t n) {
    if (reserve(b, n) != OK)
        return FAIL;
    memcpy(b->data + b->len, src, (size_t)n);
    b->len += n;
    return OK;
}

static int varint_size(uint64_t n) {
    int size = 1;
    while (n > 0x7F) {
        n >>= 7;
        size++;
    }
    return size;
}

static int put_varint(Buf *b, uint64_t n) {
    if (reserve(b, 10) != OK)
        return FAIL;
    while (n > 0x7F) {
        b->data[b->len++] = (char)((n & 0x7F) | 0x80);
        n >>= 7;
    }
    b->data[b->len++] = (char)n;
    return OK;
}

static int put_delimited(Buf *b, const unsigned char *tag, Py_ssize_t tag_len,
                         const char *src, Py_ssize_t n) {
    if (put(b, tag, tag_len) != OK || put_varint(b, (uint64_t)n) != OK)
        return FAIL;
    return put(b, src, n);
}

/* A length-delimited field whose length is known only once its body is written: one byte
 * is kept for the length, and the body moved when its length needs more. */
static int open_delimited(Buf *b, const unsigned char *tag, Py_ssize_t tag_len,
                          Py_ssize_t *start) {
    if (put(b, tag, tag_len) != OK || reserve(b, 1) != OK)
        return FAIL;
    *start = b->len++;
    return OK;
}

static int close_delimited(Buf *b, Py_ssize_t start) {
    Py_ssize_t size = b->len - start - 1;
    if (size < 0x80) {
        b->data[start] = (char)size;
        return OK;
    }
    int n = varint_size((uint64_t)size);
    if (reserve(b, n - 1) != OK)
        return FAIL;
    memmove(b->data + start + n, b->data + start + 1, (size_t)size);
    uint64_t v = (uint64_t)size;
    for (int i = 0; i < n; i++) {
        b->data[start + i] = (char)((v & 0x7F) | (i + 1 < n ? 0x80 : 0));
        v >>= 7;
    }
    b->len += n - 1;
    return OK;
}

static const unsigned char TAG1[] = {0x0a}, TAG2[] = {0x12}, TAG3[] = {0x1a}, VARINT2[] = {0x10};

/* --- encoding ----------------------------------------------------------------------------- */

static int message_into(Buf *b, Plan *plan, PyObject *obj, int depth, int top);

static int put_string(Buf *b, const unsigned char *tag, Py_ssize_t tag_len, PyObject *s,
                      int keep_zero) {
    Py_ssize_t n;
    const char *text = PyUnicode_AsUTF8AndSize(s, &n);
    if (text == NULL) { /* a lone surrogate: kube.py raises for it */
        PyErr_Clear();
        return DECLINE;
    }
    if (n == 0 && !keep_zero)
        return OK;
    return put_delimited(b, tag, tag_len, text, n);
}

/* An int field's value as Go writes it (a negative one as its 64-bit two's complement). */
static int int_value(PyObject *v, int kind, long long *out) {
    if (!PyLong_Check(v) || PyBool_Check(v))
        return DECLINE;
    int overflow;
    long long n = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (n == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return DECLINE;
    }
    if (kind == K_INT32 && (n < INT32_MIN || n > INT32_MAX))
        return DECLINE;
    *out = n;
    return OK;
}

static int scalar(Buf *b, int kind, const unsigned char *tag, Py_ssize_t tag_len, PyObject *v,
                  int keep_zero) {
    long long n;
    int r;
    switch (kind) {
    case K_STRING:
        return PyUnicode_Check(v) ? put_string(b, tag, tag_len, v, keep_zero) : DECLINE;
    case K_BOOL:
        if (!PyBool_Check(v))
            return DECLINE;
        if (v == Py_False && !keep_zero)
            return OK;
        if (put(b, tag, tag_len) != OK)
            return FAIL;
        return put(b, v == Py_True ? "\x01" : "\x00", 1);
    case K_INT32:
    case K_INT64:
        if ((r = int_value(v, kind, &n)) != OK)
            return r;
        if (n == 0 && !keep_zero)
            return OK;
        if (put(b, tag, tag_len) != OK)
            return FAIL;
        return put_varint(b, (uint64_t)n);
    default: /* K_BYTES: base64 in JSON, left to kube.py */
        return DECLINE;
    }
}

static int call_bytes(PyObject *fn, PyObject *v, PyObject **out) {
    PyObject *r = PyObject_CallOneArg(fn, v);
    if (r == NULL || !PyBytes_Check(r)) {
        Py_XDECREF(r);
        PyErr_Clear(); /* a value kube.py refuses, with its words */
        return DECLINE;
    }
    *out = r;
    return OK;
}

/* The message of a special type, as kube.py's _special_bytes. */
static int special_into(Buf *b, int special, PyObject *v) {
    PyObject *bytes;
    int r;
    switch (special) {
    case S_QUANTITY:
        return PyUnicode_Check(v) ? put_string(b, TAG1, 1, v, 1) : DECLINE;
    case S_INT_OR_STRING:
        if (PyUnicode_Check(v)) {
            if (put(b, "\x08\x01\x10\x00", 4) != OK)
                return FAIL;
            return put_string(b, TAG3, 1, v, 1);
        } else {
            long long n;
            if ((r = int_value(v, K_INT32, &n)) != OK)
                return r;
            if (put(b, "\x08\x00\x10", 3) != OK || put_varint(b, (uint64_t)n) != OK)
                return FAIL;
            return put(b, "\x1a\x00", 2);
        }
    case S_TIME:
    case S_MICRO_TIME:
        bytes = PyUnicode_Check(v) ? PyDict_GetItemWithError(times, v) : NULL;
        if (bytes != NULL && PyBytes_Check(bytes))
            return put(b, PyBytes_AS_STRING(bytes), PyBytes_GET_SIZE(bytes));
        if (PyErr_Occurred())
            return FAIL;
        if ((r = call_bytes(time_bytes, v, &bytes)) != OK)
            return r;
        r = put(b, PyBytes_AS_STRING(bytes), PyBytes_GET_SIZE(bytes));
        Py_DECREF(bytes);
        return r;
    case S_RAW:
        if ((r = call_bytes(encode_json, v, &bytes)) != OK)
            return r;
        r = put_delimited(b, TAG1, 1, PyBytes_AS_STRING(bytes), PyBytes_GET_SIZE(bytes));
        Py_DECREF(bytes);
        return r;
    default: /* S_LIST: an ExtraValue, a JSON array of strings */
        if (!PyList_Check(v))
            return DECLINE;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(v); i++) {
            PyObject *item = PyList_GET_ITEM(v, i);
            if (!PyUnicode_Check(item))
                return DECLINE;
            if ((r = put_string(b, TAG1, 1, item, 1)) != OK)
                return r;
        }
        return OK;
    }
}

static int put_message(Buf *b, const unsigned char *tag, Py_ssize_t tag_len, Plan *plan,
                       PyObject *v, int depth) {
    Py_ssize_t start;
    int r;
    if (open_delimited(b, tag, tag_len, &start) != OK)
        return FAIL;
    if ((r = message_into(b, plan, v, depth + 1, 0)) != OK)
        return r;
    return close_delimited(b, start);
}

static int field_into(Buf *b, Field *f, PyObject *v, int depth) {
    int r;
    if (f->single_string && PyUnicode_Check(v))
        return put_string(b, f->tag, f->tag_len, v, f->presence);
    if (f->kind == K_MESSAGE) {
        if (!f->repeated)
            return put_message(b, f->tag, f->tag_len, f->sub, v, depth);
        if (!PyList_Check(v))
            return DECLINE;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(v); i++)
            if ((r = put_message(b, f->tag, f->tag_len, f->sub, PyList_GET_ITEM(v, i),
                                 depth)) != OK)
                return r;
        return OK;
    }
    if (f->kind == K_MAP) {
        PyObject *key, *value;
        Py_ssize_t pos = 0, start;
        if (!PyDict_Check(v))
            return DECLINE;
        while (PyDict_Next(v, &pos, &key, &value)) {
            if (value == Py_None)
                continue;
            if (!PyUnicode_Check(key))
                return DECLINE;
            if (open_delimited(b, f->tag, f->tag_len, &start) != OK)
                return FAIL;
            if ((r = put_string(b, TAG1, 1, key, 1)) != OK)
                return r;
            if (f->value_kind == K_MESSAGE)
                r = put_message(b, TAG2, 1, f->sub, value, depth);
            else
                r = scalar(b, f->value_kind,
                           f->value_kind == K_STRING || f->value_kind == K_BYTES ? TAG2 : VARINT2,
                           1, value, 1);
            if (r != OK)
                return r;
            if (close_delimited(b, start) != OK)
                return FAIL;
        }
        return OK;
    }
    if (f->repeated) {
        if (!PyList_Check(v))
            return DECLINE;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(v); i++)
            if ((r = scalar(b, f->kind, f->tag, f->tag_len, PyList_GET_ITEM(v, i), 1)) != OK)
                return r;
        return OK;
    }
    return scalar(b, f->kind, f->tag, f->tag_len, v, f->presence);
}

/* kube.py's _fields_into: each key looked up once, the values written in field order. */
static int fields_into(Buf *b, Plan *plan, PyObject *obj, int depth, Py_ssize_t *used) {
    PyObject *local[64];
    PyObject **slots = local;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    int r = OK;
    if (plan->nfields > 64) {
        slots = PyMem_Calloc((size_t)plan->nfields, sizeof(PyObject *));
        if (slots == NULL) {
            PyErr_NoMemory();
            return FAIL;
        }
    } else {
        memset(local, 0, sizeof(PyObject *) * (size_t)plan->nfields);
    }
    while (PyDict_Next(obj, &pos, &key, &value)) {
        PyObject *index = PyDict_GetItemWithError(plan->by_key, key);
        if (index == NULL) {
            if (PyErr_Occurred()) { /* an unhashable key cannot be: a JSON key is a str */
                r = FAIL;
                goto done;
            }
            continue;
        }
        slots[PyLong_AsSsize_t(index)] = value;
        (*used)++;
    }
    for (Py_ssize_t i = 0; i < plan->nfields && r == OK; i++)
        if (slots[i] != NULL && slots[i] != Py_None)
            r = field_into(b, &plan->fields[i], slots[i], depth);
done:
    if (slots != local)
        PyMem_Free(slots);
    return r;
}

/* kube.py's _fields_in_order, for a message with inline fields. */
static int fields_in_order(Buf *b, Plan *plan, PyObject *obj, int depth, Py_ssize_t *used) {
    int r;
    for (Py_ssize_t i = 0; i < plan->nfields; i++) {
        Field *f = &plan->fields[i];
        if (f->is_inline) {
            Py_ssize_t start;
            if (open_delimited(b, f->tag, f->tag_len, &start) != OK)
                return FAIL;
            if ((r = fields_in_order(b, f->sub, obj, depth, used)) != OK)
                return r;
            if (b->len == start + 1)
                b->len = start - f->tag_len; /* nothing of it set: no field */
            else if (close_delimited(b, start) != OK)
                return FAIL;
            continue;
        }
        PyObject *value = PyDict_GetItemWithError(obj, f->key);
        if (value == NULL) {
            if (PyErr_Occurred())
                return FAIL;
            continue;
        }
        (*used)++;
        if (value != Py_None && (r = field_into(b, f, value, depth)) != OK)
            return r;
    }
    return OK;
}

static int message_into(Buf *b, Plan *plan, PyObject *obj, int depth, int top) {
    Py_ssize_t used = 0;
    int r;
    if (depth > MAX_DEPTH)
        return DECLINE;
    if (plan->special != S_PLAIN)
        return special_into(b, plan->special, obj);
    if (!PyDict_Check(obj))
        return DECLINE;
    r = plan->by_key != NULL ? fields_into(b, plan, obj, depth, &used)
                             : fields_in_order(b, plan, obj, depth, &used);
    if (r != OK || used == PyDict_GET_SIZE(obj))
        return r;
    /* keys the message lacks: only TypeMeta (of an object or a list item), or nulls */
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(obj, &pos, &key, &value)) {
        int known = PySet_Contains(plan->keys, key);
        if (known < 0)
            return FAIL;
        if (known || value == Py_None)
            continue;
        if ((plan->metadata || top) && PyUnicode_Check(key) &&
            (PyUnicode_Compare(key, api_version_key) == 0 ||
             PyUnicode_Compare(key, kind_key) == 0))
            continue;
        return DECLINE;
    }
    return OK;
}

/* --- plans ------------------------------------------------------------------------------- */

static Plan *compile_plan(PyObject *py_plan);

static int int_attr(PyObject *obj, const char *name, int *out) {
    PyObject *v = PyObject_GetAttrString(obj, name);
    if (v == NULL)
        return FAIL;
    long n = PyLong_AsLong(v);
    Py_DECREF(v);
    if (n == -1 && PyErr_Occurred())
        return FAIL;
    *out = (int)n;
    return OK;
}

static int compile_field(PyObject *py_field, Field *f) {
    PyObject *tag = NULL, *sub = NULL;
    int r = FAIL;
    f->key = PyObject_GetAttrString(py_field, "key");
    if (f->key == NULL || !PyUnicode_Check(f->key))
        goto done;
    tag = PyObject_GetAttrString(py_field, "tag");
    if (tag == NULL || !PyBytes_Check(tag) || PyBytes_GET_SIZE(tag) > 10)
        goto done;
    f->tag_len = PyBytes_GET_SIZE(tag);
    memcpy(f->tag, PyBytes_AS_STRING(tag), (size_t)f->tag_len);
    if (int_attr(py_field, "kind", &f->kind) != OK ||
        int_attr(py_field, "value_kind", &f->value_kind) != OK ||
        int_attr(py_field, "repeated", &f->repeated) != OK ||
        int_attr(py_field, "presence", &f->presence) != OK ||
        int_attr(py_field, "inline", &f->is_inline) != OK ||
        int_attr(py_field, "single_string", &f->single_string) != OK)
        goto done;
    sub = PyObject_GetAttrString(py_field, "sub");
    if (sub == NULL)
        goto done;
    f->sub = NULL;
    if (sub != Py_None && (f->sub = compile_plan(sub)) == NULL)
        goto done;
    r = OK;
done:
    Py_XDECREF(tag);
    Py_XDECREF(sub);
    return r;
}

/* A plan and the plans under it, each once (messages may nest themselves); they live as
 * long as the process, as kube.py's do. */
static Plan *compile_plan(PyObject *py_plan) {
    PyObject *known = PyDict_GetItemWithError(registry, py_plan);
    if (known != NULL)
        return PyCapsule_GetPointer(known, NULL);
    if (PyErr_Occurred())
        return NULL;
    Plan *plan = PyMem_Calloc(1, sizeof(Plan));
    if (plan == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    PyObject *capsule = PyCapsule_New(plan, NULL, NULL);
    if (capsule == NULL || PyDict_SetItem(registry, py_plan, capsule) < 0) {
        Py_XDECREF(capsule);
        return NULL;
    }
    Py_DECREF(capsule);
    PyObject *fields = NULL, *by_key = NULL;
    if (int_attr(py_plan, "special", &plan->special) != OK ||
        int_attr(py_plan, "metadata", &plan->metadata) != OK)
        goto fail;
    plan->keys = PyObject_GetAttrString(py_plan, "keys");
    fields = PyObject_GetAttrString(py_plan, "fields");
    by_key = PyObject_GetAttrString(py_plan, "by_key");
    if (plan->keys == NULL || fields == NULL || by_key == NULL || !PyTuple_Check(fields))
        goto fail;
    plan->nfields = PyTuple_GET_SIZE(fields);
    plan->fields = PyMem_Calloc((size_t)(plan->nfields ? plan->nfields : 1), sizeof(Field));
    if (plan->fields == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < plan->nfields; i++)
        if (compile_field(PyTuple_GET_ITEM(fields, i), &plan->fields[i]) != OK)
            goto fail;
    if (by_key != Py_None) {
        plan->by_key = PyDict_New();
        if (plan->by_key == NULL)
            goto fail;
        for (Py_ssize_t i = 0; i < plan->nfields; i++) {
            PyObject *index = PyLong_FromSsize_t(i);
            if (index == NULL || PyDict_SetItem(plan->by_key, plan->fields[i].key, index) < 0) {
                Py_XDECREF(index);
                goto fail;
            }
            Py_DECREF(index);
        }
    }
    Py_DECREF(fields);
    Py_DECREF(by_key);
    return plan;
fail:
    Py_XDECREF(fields);
    Py_XDECREF(by_key);
    PyDict_DelItem(registry, py_plan); /* the half-built plan stays unused */
    return NULL;
}

/* --- module ------------------------------------------------------------------------------ */

static PyObject *py_configure(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyDict_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "configure(times, time_bytes, encode_json)");
        return NULL;
    }
    Py_XSETREF(times, Py_NewRef(args[0]));
    Py_XSETREF(time_bytes, Py_NewRef(args[1]));
    Py_XSETREF(encode_json, Py_NewRef(args[2]));
    Py_RETURN_NONE;
}

static PyObject *py_compile(PyObject *self, PyObject *py_plan) {
    Plan *plan = compile_plan(py_plan);
    if (plan == NULL)
        return NULL;
    return PyCapsule_New(plan, NULL, NULL);
}

/* kube.py's encode(): the magic, then a runtime.Unknown of typeMeta and the message. */
static int object_into(Buf *b, Plan *plan, PyObject *obj, PyObject *api_version,
                       PyObject *kind) {
    Py_ssize_t type_meta, raw;
    int r;
    if (put(b, "k8s\x00", 4) != OK || open_delimited(b, TAG1, 1, &type_meta) != OK)
        return FAIL;
    if ((r = put_string(b, TAG1, 1, api_version, 1)) != OK ||
        (r = put_string(b, TAG2, 1, kind, 1)) != OK)
        return r;
    if (close_delimited(b, type_meta) != OK || open_delimited(b, TAG2, 1, &raw) != OK)
        return FAIL;
    if ((r = message_into(b, plan, obj, 0, 1)) != OK)
        return r;
    return close_delimited(b, raw);
}

static PyObject *py_encode(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "encode(handle, obj, api_version, kind)");
        return NULL;
    }
    Plan *plan = PyCapsule_GetPointer(args[0], NULL);
    if (plan == NULL)
        return NULL;
    if (times == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "configure() was not called");
        return NULL;
    }
    if (!PyUnicode_Check(args[2]) || !PyUnicode_Check(args[3]))
        Py_RETURN_NONE;
    Buf b = {NULL, 0, 0};
    int r = reserve(&b, 512);
    if (r == OK)
        r = object_into(&b, plan, args[1], args[2], args[3]);
    PyObject *out = NULL;
    if (r == OK)
        out = PyBytes_FromStringAndSize(b.data, b.len);
    else if (r == DECLINE)
        out = Py_NewRef(Py_None);
    PyMem_Free(b.data);
    return out;
}

static PyMethodDef methods[] = {
    {"configure", (PyCFunction)(void (*)(void))py_configure, METH_FASTCALL,
     "configure(times, time_bytes, encode_json): kube.py's conversions of times (its cache "
     "and what fills it) and of raw JSON values."},
    {"compile", py_compile, METH_O, "compile(plan): a handle of kube.py's plan for encode()."},
    {"encode", (PyCFunction)(void (*)(void))py_encode, METH_FASTCALL,
     "encode(handle, obj, api_version, kind): obj's protobuf bytes, or None for kube.py to "
     "encode it."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_encode", NULL, -1, methods};

PyMODINIT_FUNC PyInit__encode(void) {
    registry = PyDict_New();
    api_version_key = PyUnicode_InternFromString("apiVersion");
    kind_key = PyUnicode_InternFromString("kind");
    if (registry == NULL || api_version_key == NULL || kind_key == NULL)
        return NULL;
    return PyModule_Create(&module);
}
