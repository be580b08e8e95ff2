SELECT customer_id, SUM(amount) AS total_spend
FROM ref('clean_orders')
WHERE amount > 0
GROUP BY customer_id
HAVING SUM(amount) > 0
