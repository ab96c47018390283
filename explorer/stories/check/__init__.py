"""The Check your implementation story: the page's inputs for each kind, a visitor's uploaded
output read safely, and the checker's verdict on it drawn beside the definition."""
