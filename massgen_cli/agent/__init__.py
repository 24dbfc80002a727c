"""An agent: its data, the request path its steps take, what its calls spend and the run's caps."""
