"""Disposition of every named tree-sitter-cuda node kind inside a function body.

Each kind is exactly one of: a statement handler or an expression handler (the tables in
:mod:`cuda2nki.frontend.lower`), ``STRUCTURAL`` (read by its parent's handler, never dispatched
on its own), or ``REJECTED_KINDS`` (refused with the given rule id where it appears in device
code).  ``tests/frontend/test_nodekinds.py`` checks the grammar's kinds against these tables.
"""

from __future__ import annotations

# Read by the parent's handler (declarators, specifiers, argument lists, clause wrappers...).
STRUCTURAL: frozenset[str] = frozenset(
    """
    argument_list subscript_argument_list template_argument_list type_descriptor primitive_type
    sized_type_specifier type_identifier type_qualifier storage_class_specifier init_declarator
    array_declarator pointer_declarator parenthesized_declarator attributed_declarator
    abstract_array_declarator abstract_pointer_declarator abstract_parenthesized_declarator
    abstract_reference_declarator abstract_function_declarator function_declarator
    field_identifier condition_clause else_clause case_statement escape_sequence string_content
    character preproc_arg preproc_directive attribute_specifier attribute attribute_declaration
    alignas_qualifier launch_bounds placeholder_type_specifier auto namespace_identifier
    statement_identifier nested_namespace_specifier literal_suffix raw_string_content raw_string_delimiter system_lib_string
    parameter_list parameter_declaration optional_parameter_declaration
    type_parameter_declaration template_parameter_list kernel_call_syntax initializer_pair
    gnu_asm_qualifier gnu_asm_output_operand_list gnu_asm_output_operand gnu_asm_input_operand_list
    gnu_asm_input_operand gnu_asm_clobber_list gnu_asm_goto_list
    """.split()
)

_C2N1010 = """
    lambda_expression lambda_capture_specifier lambda_capture_initializer lambda_default_capture
    lambda_declarator lambda_specifier new_expression new_declarator delete_expression
    throw_statement throw_specifier try_statement catch_clause for_range_loop
    co_await_expression co_return_statement co_yield_statement fold_expression requires_expression
    requires_clause requirement_seq simple_requirement compound_requirement type_requirement
    generic_expression offsetof_expression
    user_defined_literal this structured_binding_declarator expansion_statement
    reflect_expression splice_expression splice_specifier splice_type_specifier seh_try_statement
    seh_except_clause seh_finally_clause seh_leave_statement extension_expression
    parameter_pack_expansion dependent_name dependent_type template_method operator_cast
    operator_name destructor_name decltype function_definition template_declaration
    template_instantiation namespace_definition linkage_specification declaration_list
    field_declaration field_declaration_list field_initializer_list field_initializer
    field_designator subscript_designator subscript_range_designator bitfield_clause
    access_specifier base_class_clause friend_declaration default_method_clause
    delete_method_clause pure_virtual_clause virtual_specifier explicit_function_specifier
    explicit_object_parameter_declaration optional_type_parameter_declaration
    template_template_parameter_declaration variadic_parameter_declaration
    variadic_type_parameter_declaration variadic_declarator reference_declarator ref_qualifier
    trailing_return_type noexcept concept_definition constraint_conjunction constraint_disjunction
    module_declaration module_name module_partition export_declaration import_declaration
    global_module_fragment_declaration private_module_fragment_declaration
    consteval_block_declaration annotation enumerator enumerator_list translation_unit
    preproc_def preproc_function_def preproc_params preproc_if preproc_ifdef preproc_else
    preproc_elif preproc_elifdef preproc_defined preproc_include init_statement
    ms_based_modifier ms_call_modifier ms_declspec_modifier ms_pointer_modifier
    ms_restrict_modifier ms_signed_ptr_modifier ms_unaligned_ptr_modifier
    ms_unsigned_ptr_modifier pointer_type_declarator template_type
"""

_C2N1025 = "struct_specifier class_specifier union_specifier enum_specifier"

REJECTED_KINDS: dict[str, str] = {
    **{k: "C2N1010" for k in _C2N1010.split()},
    **{k: "C2N1025" for k in _C2N1025.split()},
    "goto_statement": "C2N1011",
    "gnu_asm_expression": "C2N1013",
}

# Kinds that a construct's handler reads in some positions although they are refused where
# they appear anywhere else (the notes of ``docs/cuda-subset.md``).
PARTLY_SUPPORTED: dict[str, str] = {
    "lambda_expression": (
        "inlined where bound to an `auto` variable (capturing by reference or nothing) and "
        "called as a statement; refused elsewhere (C2N1010)"
    ),
    "lambda_capture_specifier": "read with its lambda (`[&]`, `[]`); by-value captures refused",
    "lambda_declarator": "read with its lambda (its parameter list)",
    "lambda_default_capture": "read with its lambda (`[&]`)",
    "dependent_type": (
        "`typename S<T>::member`: a struct's member typedef (explicit specialisation or "
        "primary template); any other is an unknown type (C2N1022)"
    ),
    "this": (
        "`this->member` and `this->f(...)` inside a member function of an aggregate struct; "
        "refused elsewhere (C2N1010)"
    ),
    "template_type": (
        "as a type: packed vector structs (`Packed128<float>`) and member typedefs "
        "(`vec4<float>::Type`); refused as a value (C2N1010)"
    ),
}
