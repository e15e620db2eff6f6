"""The gru.py code page: docs/code/gru.md, from docs/code/gru.py and its notebook."""

from .code_pages import register_code_page
from .registry import Page

RUNS = [
    ("python3 gru.py", "Trains the GRU in d2l's configuration: the data and the model, "
                       "one table row per epoch as training runs, the sample and the time."),
    ("python3 gru.py --gradcheck", "Every analytic gradient of the three cells against "
                                   "central finite differences, in float64."),
    ("python3 gru.py --compare", "Trains the GRU, the LSTM and the plain RNN on the same "
                                 "harness, one after the other, and compares them."),
]

PAGE = register_code_page(Page("code/gru.md", script="code/gru.py"), "gru.py",
                          chapter="ch14-gru-lm.md", runs=RUNS, data_files=("timemachine.txt",))
