-- The three products with the most revenue in each category, by position: each place of
-- the top is one row, updated as products overtake each other.
SELECT category, position, product_id, revenue
FROM (
  SELECT category, product_id, revenue,
    ROW_NUMBER() OVER (PARTITION BY category ORDER BY revenue DESC) AS position
  FROM ref('product_revenue')
)
WHERE position <= 3
