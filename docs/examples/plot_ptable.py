"""
A p-table of the Cell Key Method
================================

``create_cnt_ptable`` builds a count p-table by maximum entropy, as R's
``ptable`` does: for every original count ``i`` (one row), the
probabilities of the published counts ``i + v``. ``js = 2`` blocks the
published counts 1 and 2; ``D = 5`` bounds the deviation.
"""

from plotnine import theme

import plotnine_private as pp

ptab = pp.create_cnt_ptable(D=5, V=2.01, js=2)
print(ptab)

# %%

(pp.plot_ptable(ptab) + theme(figure_size=(9, 6))).show()
