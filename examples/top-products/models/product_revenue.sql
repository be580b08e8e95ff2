-- Revenue and the number of sales per product, updated with each sale; refunds (amounts of
-- zero or less) and sales without a category or product are left out.
SELECT category, product_id, SUM(amount) AS revenue, COUNT(*) AS sales
FROM source('sales')
WHERE amount > 0 AND category IS NOT NULL AND product_id IS NOT NULL
GROUP BY category, product_id
