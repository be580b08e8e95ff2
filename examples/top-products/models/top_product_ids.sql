-- The same top three, one row per product: a product is inserted when it enters the top
-- and deleted when it leaves it.
SELECT category, product_id, revenue
FROM (
  SELECT category, product_id, revenue,
    ROW_NUMBER() OVER (PARTITION BY category ORDER BY revenue DESC) AS rn
  FROM ref('product_revenue')
)
WHERE rn <= 3
