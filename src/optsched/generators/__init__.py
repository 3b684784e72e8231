"""Instance generators, one module per problem; each problem's registry entry names its generator
(``optsched.generate("rar", jobs=8, servers=3, seed=1)`` calls [`optsched.generators.rar.contended_rar_instance`][]).

Generators sit above the performance models and the heuristics: a generator may use them to derive an
instance's data (the total-JCT generator estimates each job's modes with Heavy-Edge and eq. 7).
"""
