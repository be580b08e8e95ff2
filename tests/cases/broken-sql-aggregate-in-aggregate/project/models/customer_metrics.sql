SELECT customer_id, AVG(SUM(amount)) AS total_spend FROM source('orders') GROUP BY customer_id
