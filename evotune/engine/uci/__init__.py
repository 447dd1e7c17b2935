"""The built-in engine as a UCI engine (``evotune uci``): the protocol loop and search thread
(``frontend``), the text of ``go`` and ``position`` (``commands``), the UCI options
(``engineoptions``) and the time allocation under a clock (``timeman``). Import from the
modules."""
