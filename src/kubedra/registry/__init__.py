"""The per-kind write rules, below the API server so ``kubedra validate`` runs them too.

``pipeline`` is the one create/update path (decode, strict fields, identity, defaults,
strategy, validation: upstream's decoder plus ``rest.BeforeCreate``/``BeforeUpdate``);
``table`` names each kind's strategy; ``strategies/`` holds the strategies (upstream
``pkg/registry/<group>/<kind>/strategy.go``). Pure: no I/O, no HTTP.
"""
