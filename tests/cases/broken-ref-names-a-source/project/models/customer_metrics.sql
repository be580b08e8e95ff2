SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM ref('orders')
GROUP BY customer_id
