"""ray.tune.examples after the port: Ray's example modules are not part of trainrt (one line on
import). An example that imports another (`from ray.tune.examples.pbt_function import ...`) needs
that file ported too."""
raise ImportError("trainrt.tune.examples: Ray's example modules are not part of trainrt; copy the one imported "
                  "(ray/tune/examples/NAME.py in Ray's package) beside the script, port it with the same sed, and "
                  "import it by its own name")
