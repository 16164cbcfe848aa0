"""Loading eval files of every dialect into the normalised model."""
