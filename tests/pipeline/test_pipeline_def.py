"""``@pipeline_def`` splits its arguments as DALI 2.4 does, and ``do_not_convert`` marks as
DALI's does (what DALI 2.4 did in each case was checked by running it)."""

from __future__ import annotations

import re
import warnings

import pytest

from stoker import fn, pipeline_def
from stoker.errors import ArgumentTypeError
from stoker.pipeline import do_not_convert

CPU = {"num_threads": 1, "device_id": None}


def test_a_parameter_named_like_a_pipeline_argument_shadows_it() -> None:
    # DALI: the call's value goes to the function only; the pipeline keeps the
    # decorator's, and a warning says so.
    @pipeline_def(batch_size=2, num_threads=3, device_id=None)
    def make(num_threads):
        return fn.constant(idata=[num_threads])

    with pytest.warns(UserWarning, match="'num_threads' of 'make' shadows a Pipeline "
                                         "constructor argument"):
        pipe = make(num_threads=42)
    assert pipe.num_threads == 3
    assert pipe.run()[0].as_array().tolist() == [[42], [42]]
    pipe.close()


def test_a_shadowing_parameter_gets_nothing_from_the_decorator() -> None:
    @pipeline_def(batch_size=2, **CPU)
    def make(batch_size=7):
        return fn.constant(idata=[batch_size])

    pipe = make()
    assert pipe.batch_size == 2 and pipe.run()[0].as_array().tolist() == [[7], [7]]
    pipe.close()


def test_a_function_with_var_keyword_arguments_is_refused_at_the_call() -> None:
    @pipeline_def(batch_size=2, **CPU)  # decorating is fine, as in DALI
    def make(a, *args, **options):
        return fn.constant(idata=[a])

    with pytest.raises(TypeError, match=re.escape("takes **options: variadic keyword "
                                                  "arguments (**kwargs) are not allowed")):
        make(a=1)


def test_unknown_decorator_arguments_wait_for_the_call() -> None:
    @pipeline_def(batch_sise=2, **CPU)  # DALI passes them on to Pipeline() at the call
    def make():
        return fn.constant(idata=[1])

    with pytest.raises(ArgumentTypeError, match=re.escape(
            "pipeline_def: 'batch_sise' is neither a Pipeline argument nor a parameter of "
            "'make'; did you mean 'batch_size'?")):
        make()


def test_max_batch_size_is_the_batch_size() -> None:
    @pipeline_def(max_batch_size=3, **CPU)
    def make():
        return fn.constant(idata=[1])

    pipe = make()
    assert pipe.batch_size == 3 and len(pipe.run()[0]) == 3
    pipe.close()
    with pytest.raises(ArgumentTypeError, match="batch_size=4 and max_batch_size=3 disagree"):
        make(batch_size=4)


def test_debug_and_enable_conditionals_at_the_call_are_dropped() -> None:
    @pipeline_def(batch_size=1, **CPU)
    def make():
        return fn.constant(idata=[1])

    make(debug=False, enable_conditionals=False).close()
    make(enable_conditionals=True).close()  # turns conditionals on for this call


def test_a_function_taking_debug_receives_it() -> None:
    @pipeline_def(batch_size=1, **CPU)
    def make(debug):
        return fn.constant(idata=[int(debug)])

    pipe = make(debug=True)
    assert pipe.run()[0].as_array().tolist() == [[1]]
    pipe.close()


def test_do_not_convert_leaves_a_function_working() -> None:
    @do_not_convert
    def double(x):
        return x * 2

    assert double(4) == 8
    assert do_not_convert()(double) is double  # also used with parentheses


def test_a_pipeline_definition_cannot_be_marked_do_not_convert() -> None:
    with pytest.raises(ValueError, match=re.escape(
            "Pipeline definition cannot be marked with @do_not_convert.")):
        @pipeline_def
        @do_not_convert
        def marked_then_defined():
            return 1

    with pytest.raises(ValueError, match=re.escape(
            "Pipeline definition cannot be marked with @do_not_convert.")):
        @do_not_convert
        @pipeline_def
        def defined_then_marked():
            return 1


def test_no_warning_without_shadowing() -> None:
    @pipeline_def(batch_size=1, **CPU)
    def make(scale):
        return fn.constant(idata=[scale])

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make(scale=2).close()
