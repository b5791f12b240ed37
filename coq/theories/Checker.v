(** * Checker: boolean checkers for the exported claims, with their soundness.

    Every checker is a boolean function of exported data and witnesses,
    computed by [vm_compute]; its soundness theorem turns [true] into the
    claimed statement about the Jacobian over Q, recomputed from the
    network's own definition ([Jacobian]).  Witnesses (visible columns,
    kernel directions, pivot rows, inverses mod p) are never trusted:
    each is checked. *)

From Coq Require Import List QArith ZArith Lia Arith Sorted Uint63.
From Symattn Require Import Alg Series Tangent Network Modp Jacobian Rank Smith.
Import ListNotations.

(** ** Small boolean helpers and their specifications *)

Lemma nth_map_seq' {X : Type} (n k : nat) (f : nat -> X) d : (k < n)%nat -> nth k (map f (seq 0 n)) d = f k.
Proof.
  intros H. rewrite (nth_indep _ _ (f O)) by (rewrite map_length, seq_length; auto).
  rewrite map_nth, seq_nth by auto; reflexivity.
Qed.

Fixpoint sorted_b (l : list nat) : bool :=
  match l with
  | x :: ((y :: _) as t) => andb (Nat.leb x y) (sorted_b t)
  | _ => true
  end.

Lemma sorted_b_spec l : sorted_b l = true -> Sorted le l.
Proof.
  induction l as [|x l IH]; intros H; [constructor|].
  destruct l as [|y l]; [repeat constructor|].
  simpl in H; apply andb_prop in H as [H1 H2].
  constructor; [apply IH; auto|constructor; apply Nat.leb_le; auto].
Qed.

Fixpoint nodup_b (l : list nat) : bool :=
  match l with [] => true | x :: l' => andb (negb (existsb (Nat.eqb x) l')) (nodup_b l') end.

Lemma nodup_b_spec l : nodup_b l = true -> NoDup l.
Proof.
  induction l as [|x l IH]; simpl; intros H; [constructor|].
  apply andb_prop in H as [H1 H2]; constructor; auto.
  intros Hin. apply negb_true_iff in H1. rewrite <- not_true_iff_false in H1.
  apply H1, existsb_exists; exists x; split; auto; apply Nat.eqb_refl.
Qed.

Definition p_ok (p : int) : bool := andb (1 <? to_Z p)%Z (to_Z p <? 2147483648)%Z.

Lemma p_ok_spec p : p_ok p = true -> (1 < to_Z p < 2147483648)%Z.
Proof. unfold p_ok; intros H; apply andb_prop in H as [H1 H2]; apply Z.ltb_lt in H1, H2; lia. Qed.

Lemma Forall2_seq_map_list {X Y : Type} (R : X -> Y -> Prop) (f : nat -> X) (g : nat -> Y) (S : list nat) :
  (forall k, R (f k) (g k)) -> Forall2 R (map f S) (map g S).
Proof. intros H; induction S; simpl; constructor; auto. Qed.

Lemma forallb_seq f n : forallb f (seq 0 n) = true -> forall j, (j < n)%nat -> f j = true.
Proof. intros H j Hj; rewrite forallb_forall in H; apply H, in_seq; lia. Qed.

Lemma forallb_In {X : Type} (f : X -> bool) l x : forallb f l = true -> In x l -> f x = true.
Proof. rewrite forallb_forall; auto. Qed.

(** ** Shapes of the Jacobian *)

Lemma jac_rows_shape K m P out : Forall (fun row => length row = P) (jac_rows K m P out).
Proof.
  unfold jac_rows; induction out; simpl; [constructor|].
  apply Forall_app; split; auto.
  apply Forall_forall; intros row Hrow; apply in_map_iff in Hrow as [e [<- _]].
  unfold jac_row; rewrite map_length, seq_length; reflexivity.
Qed.

Lemma native_jacobian_shape K m ls bank :
  Forall (fun row => length row = native_size ls) (native_jacobian K m ls bank).
Proof.
  unfold native_jacobian; induction bank; cbn [flat_map]; [constructor|].
  apply Forall_app; split; [apply jac_rows_shape|exact IHbank].
Qed.

Lemma effective_jacobian_shape K m ss L bank :
  Forall (fun row => length row = effective_size ss L) (effective_jacobian K m ss L bank).
Proof.
  unfold effective_jacobian; induction bank; cbn [flat_map]; [constructor|].
  apply Forall_app; split; [apply jac_rows_shape|exact IHbank].
Qed.

(** ** Reduction of a rational matrix, and nonsingularity from a witness *)

Definition reduce (p : int) (A : QM) : list (list fp) := map (map (fofQ p)) A.

Lemma reduce_rel p A : (1 < to_Z p < 2147483648)%Z -> Forall2 (Forall2 (Rp p)) A (reduce p A).
Proof.
  intros Hp; pose proof (Fp_rel p Hp) as HR.
  unfold reduce; induction A; simpl; constructor; auto.
  clear IHA; induction a; simpl; constructor; auto; apply (rel_ofQ _ _ _ HR).
Qed.

Definition check_nonsingular (p : int) (A : QM) (W : list (list Z)) : bool :=
  andb (forallb (fun row => Nat.eqb (length row) (length A)) A)
       (check_inverse p (reduce p A) (seq 0 (length A)) W (length A)).

Lemma check_nonsingular_sound p A W : (1 < to_Z p < 2147483648)%Z ->
  check_nonsingular p A W = true -> nonsingular A.
Proof.
  intros Hp H; apply andb_prop in H as [H1 H2]; split.
  - apply Forall_forall; intros row Hrow; apply Nat.eqb_eq. rewrite forallb_forall in H1; apply H1; auto.
  - eapply fcr_of_check; [exact Hp|apply reduce_rel; exact Hp|exact H2].
Qed.

(** ** Theorem 4 / Prop. D.1: Smith orders, with the zeros checked over Q *)

Definition zeros_ok (m r P N : nat) (s : list nat) (JB : SM) : bool :=
  forallb (fun i =>
    forallb (fun c =>
      forallb (fun k => Qeq_bool (coef (nth c (nth i JB []) []) k) 0)
              (seq 0 (if Nat.ltb c r then nth c s O else m)))
      (seq 0 P))
    (seq 0 N).

Lemma zeros_ok_sound m r P N s JB : (r <= P)%nat -> zeros_ok m r P N s JB = true ->
  (forall i c k, (i < N)%nat -> (c < r)%nat -> (k < nth c s O)%nat -> coef (nth c (nth i JB []) []) k == 0) /\
  (forall i c k, (i < N)%nat -> (r <= c < P)%nat -> (k < m)%nat -> coef (nth c (nth i JB []) []) k == 0).
Proof.
  intros HrP H; split; intros i c k Hi Hc Hk;
    pose proof (forallb_seq _ _ H i Hi) as H1; simpl in H1;
    [pose proof (forallb_seq _ _ H1 c ltac:(lia)) as H2|pose proof (forallb_seq _ _ H1 c ltac:(lia)) as H2];
    simpl in H2.
  - destruct (Nat.ltb_spec c r); [|lia].
    apply Qeq_bool_eq, (forallb_seq _ _ H2 k Hk).
  - destruct (Nat.ltb_spec c r); [lia|].
    apply Qeq_bool_eq, (forallb_seq _ _ H2 k Hk).
Qed.

(** The data of a spectrum certificate: the visible columns [vis] (one per
    claimed order, in the order of [s]), the kernel directions [xi] (series
    vectors in all native parameters), the pivot rows [I] of the divided
    frame, a modulus [p] and the inverses mod p of [B(0)] and of the frame. *)
Record spectrum_witness := {
  sw_vis : list nat;
  sw_xi : list (list (list Q));
  sw_rows : list nat;
  sw_p : int;
  sw_WB : list (list Z);
  sw_WE : list (list Z)
}.

Definition check_spectrum_exact (m : nat) (ls : list (list Q * QSM * QSM * QSM)) (bank : list QSM)
    (s : list nat) (z : nat) (w : spectrum_witness) : bool :=
  let r := length s in
  let P := (r + z)%nat in
  let J := native_jacobian Qalg m ls bank in
  let N := length J in
  let B := frame_B P (sw_vis w) (sw_xi w) in
  let JB := smat_mul m P J B in
  let p := sw_p w in
  andb (andb (andb (sorted_b s) (forallb (fun k => Nat.ltb k m) s))
             (andb (andb (Nat.eqb (length (sw_vis w)) r) (Nat.leb r N))
                   (andb (Nat.eqb (native_size ls) P) (Nat.eqb (length (sw_xi w)) z))))
       (andb (andb (andb (nodup_b (sw_rows w)) (Nat.eqb (length (sw_rows w)) r))
                   (andb (forallb (fun i => Nat.ltb i N) (sw_rows w)) (p_ok p)))
             (andb (check_nonsingular p (const_part B) (sw_WB w))
                   (andb (zeros_ok m r P N s JB)
                         (check_nonsingular p (divided_frame m J s (sw_vis w) (sw_xi w) (sw_rows w)) (sw_WE w))))).

Theorem check_spectrum_exact_sound m ls bank s z w :
  check_spectrum_exact m ls bank s z w = true ->
  smith_form m (native_jacobian Qalg m ls bank) s z.
Proof.
  unfold check_spectrum_exact; intros H.
  repeat match goal with
         | H : andb _ _ = true |- _ => apply andb_prop in H as [? ?]
         end.
  repeat match goal with
         | H : Nat.eqb _ _ = true |- _ => apply Nat.eqb_eq in H
         | H : Nat.leb _ _ = true |- _ => apply Nat.leb_le in H
         end.
  set (J := native_jacobian Qalg m ls bank) in *.
  match goal with H : length (sw_xi w) = z |- _ => rewrite <- H in * end.
  match goal with H : p_ok _ = true |- _ => apply p_ok_spec in H end.
  match goal with H : zeros_ok _ _ _ _ _ _ = true |- _ => apply zeros_ok_sound in H as [Hval Hker]; [|lia] end.
  apply (smith_of_frame m J s (sw_vis w) (sw_xi w) (sw_rows w)); auto.
  - apply sorted_b_spec; auto.
  - apply Forall_forall; intros k Hk; apply Nat.ltb_lt.
    match goal with H : forallb (fun k => Nat.ltb k m) s = true |- _ => rewrite forallb_forall in H; apply H; auto end.
  - pose proof (native_jacobian_shape Qalg m ls bank) as HS. fold J in HS.
    match goal with H : native_size ls = _ |- _ => rewrite H in HS end. exact HS.
  - eapply check_nonsingular_sound; eauto.
  - apply nodup_b_spec; auto.
  - apply Forall_forall; intros i Hi; apply Nat.ltb_lt.
    match goal with H : forallb (fun i => Nat.ltb i _) (sw_rows w) = true |- _ => rewrite forallb_forall in H; apply H; auto end.
  - eapply check_nonsingular_sound; eauto.
Qed.

(** ** Theorem 3: ray Jacobians of the zero-input jets *)

(** The coefficient matrix through degree [N]: each row of [J] gives [N + 1]
    rows, the coefficients of [rho^0, ..., rho^N] of its entries. *)
Definition ray_coefficients {X : Type} (d : X) (N : nat) (J : list (list (list X))) : list (list X) :=
  flat_map (fun row => map (fun k => map (fun s => nth k s d) row) (seq 0 (S N))) J.

Definition qray (N : nat) (J : SM) : QM := ray_coefficients 0%Q N J.

Lemma ray_coefficients_rel {X Y : Type} (R : X -> Y -> Prop) dx dy N J J' :
  R dx dy -> Forall2 (Forall2 (Forall2 R)) J J' ->
  Forall2 (Forall2 R) (ray_coefficients dx N J) (ray_coefficients dy N J').
Proof.
  intros Hd H; unfold ray_coefficients; induction H; cbn [flat_map]; [constructor|].
  apply Forall2_app; auto.
  apply Forall2_seq_map; intros k.
  eapply Forall2_map; eauto; intros s s' Hs; apply Forall2_nth; auto.
Qed.

(** Sharp degree: through degree [N] the ray coefficients determine all [P]
    parameters to first order (full column rank), and the block [last] (the
    entries of [M_D]) enters no coefficient below degree [N]. *)
Definition block_vanishes_below (N : nat) (J : SM) (last : list nat) : Prop :=
  forall row j k, In row J -> In j last -> (k < N)%nat -> coef (nth j row []) k == 0.

Definition sharp_degree (J : SM) (P N : nat) (last : list nat) : Prop :=
  full_column_rank P (qray N J) /\ block_vanishes_below N J last.

(** Hence no lower degree has full column rank: the least such degree is [N]. *)
Lemma sharp_degree_least J P N last :
  sharp_degree J P N last -> last <> [] -> Forall (fun j => (j < P)%nat) last ->
  Forall (fun row => length row = P) J ->
  forall N', (N' < N)%nat -> ~ full_column_rank P (qray N' J).
Proof.
  intros [_ Hv] Hne Hlt HJ N' HN' Hf.
  destruct last as [|j last']; [congruence|].
  assert (Hj : (j < P)%nat) by (inversion Hlt; auto).
  set (x := map (fun i => if Nat.eqb i j then 1 else 0) (seq 0 P)).
  assert (Hx : length x = P) by (unfold x; rewrite map_length, seq_length; auto).
  specialize (Hf x Hx).
  assert (Z : qzero (qmat_vec (qray N' J) x)).
  { apply Forall_forall; intros q Hq.
    unfold qmat_vec, mat_vec in Hq; apply in_map_iff in Hq as [row [<- Hrow]].
    unfold qray, ray_coefficients in Hrow; apply in_flat_map in Hrow as [jr [HJr Hk]].
    apply in_map_iff in Hk as [k [<- Hk]]. apply in_seq in Hk.
    assert (Hl : length jr = P) by (rewrite Forall_forall in HJ; auto).
    rewrite (dot_sumq _ _ P) by (rewrite ?map_length; change (car Qalg) with Q in *; lia).
    rewrite (sumq_ext _ _ (fun i => (if Nat.eqb j i then 1 else 0) * nth i (map (fun s => nth k s 0) jr) 0)).
    - rewrite sumq_delta by auto. rewrite (nth_map_lt _ _ []) by lia.
      apply (Hv jr j k HJr); [left; auto|lia].
    - intros i Hi. unfold x. rewrite (nth_map_seq' P i) by auto.
      rewrite Nat.eqb_sym. apply Qmult_comm. }
  specialize (Hf Z). apply qzero_nth with (k := j) in Hf; [|lia].
  unfold x in Hf. rewrite (nth_map_seq' P j) in Hf by auto. rewrite Nat.eqb_refl in Hf.
  discriminate (proj1 (Qeq_alt 1 0) Hf).
Qed.

(** Rank witnesses for a ray coefficient matrix: columns [S], rows [I], [W] the inverse
    mod [p] of the selected square block. *)
Record rank_witness := {
  rw_cols : list nat;
  rw_rows : list nat;
  rw_p : int;
  rw_W : list (list Z)
}.

Definition fpray (p : int) (N : nat) (J : list (list (list fp))) : list (list fp) :=
  ray_coefficients (0%uint63, true) N J.

Definition fcols (A : list (list fp)) (S : list nat) : list (list fp) :=
  map (fun row => map (fun j => nth j row (0%uint63, true)) S) A.

Definition check_rank_of (p : int) (Ab : list (list fp)) (w : rank_witness) (r : nat) : bool :=
  andb (andb (p_ok p) (Nat.eqb (length (rw_cols w)) r))
       (andb (nodup_b (rw_cols w)) (check_inverse p (fcols Ab (rw_cols w)) (rw_rows w) (rw_W w) r)).

Lemma check_rank_of_sound p (A : QM) Ab w r :
  p = rw_p w -> ((1 < to_Z p < 2147483648)%Z -> Forall2 (Forall2 (Rp p)) A Ab) ->
  check_rank_of p Ab w r = true -> rank_at_least A r.
Proof.
  intros -> HA H; unfold check_rank_of in H.
  apply andb_prop in H as [H1 H2]; apply andb_prop in H1 as [Hp Hl]; apply andb_prop in H2 as [Hn Hc].
  apply p_ok_spec in Hp; apply Nat.eqb_eq in Hl; subst r.
  apply (rank_of_check (rw_p w) A (rw_cols w) (fcols Ab (rw_cols w)) (rw_rows w) (rw_W w)); auto.
  - specialize (HA Hp); pose proof (Fp_rel _ Hp) as HR.
    unfold qcols, fcols; eapply Forall2_map; eauto; intros row row' Hr.
    apply Forall2_seq_map_list; intros j; apply Forall2_nth; auto; apply (rel_zero _ _ _ HR).
  - apply nodup_b_spec; auto.
Qed.

(** *** Theorem 3, with the zeros of the last block computed over Q *)

Definition zero_block_exact (N : nat) (J : SM) (last : list nat) : bool :=
  forallb (fun row => forallb (fun j => forallb (fun k => Qeq_bool (coef (nth j row []) k) 0) (seq 0 N)) last) J.

Lemma zero_block_exact_sound N J last : zero_block_exact N J last = true -> block_vanishes_below N J last.
Proof.
  intros H row j k Hrow Hj Hk.
  unfold zero_block_exact in H. rewrite forallb_forall in H. specialize (H row Hrow).
  rewrite forallb_forall in H. specialize (H j Hj). apply Qeq_bool_eq, (forallb_seq _ _ H k Hk).
Qed.

Definition check_jet_exact (N : nat) (ss : list (list Q * QSM)) (L : QSM) (rays : list QSM)
    (last : list nat) (w : rank_witness) : bool :=
  let p := rw_p w in
  let P := effective_size ss L in
  andb (andb (p_ok p) (check_inverse p (fpray p N (effective_jacobian (Fpalg p) (S N) ss L rays)) (rw_rows w) (rw_W w) P))
       (zero_block_exact N (effective_jacobian Qalg (S N) ss L rays) last).

Theorem check_jet_exact_sound N ss L rays last w :
  check_jet_exact N ss L rays last w = true ->
  sharp_degree (effective_jacobian Qalg (S N) ss L rays) (effective_size ss L) N last.
Proof.
  unfold check_jet_exact; intros H.
  apply andb_prop in H as [H1 H2]; apply andb_prop in H1 as [Hp Hc]; apply p_ok_spec in Hp.
  split; [|apply zero_block_exact_sound; auto].
  eapply fcr_of_check; [exact Hp| |exact Hc].
  apply ray_coefficients_rel; [apply (rel_zero _ _ _ (Fp_rel _ Hp))|].
  exact (effective_jacobian_rel Qalg (Fpalg _) (Rp _) (Fp_rel _ Hp) (S N) ss L rays).
Qed.

(** *** Dimension lower bounds: the rank of a native ray Jacobian *)

Definition check_native_rank (N : nat) (ls : list (list Q * QSM * QSM * QSM)) (rays : list QSM)
    (r : nat) (w : rank_witness) : bool :=
  let p := rw_p w in
  check_rank_of p (fpray p N (native_jacobian (Fpalg p) (S N) ls rays)) w r.

Theorem check_native_rank_sound N ls rays r w :
  check_native_rank N ls rays r w = true ->
  rank_at_least (qray N (native_jacobian Qalg (S N) ls rays)) r.
Proof.
  unfold check_native_rank; intros H.
  eapply check_rank_of_sound; [reflexivity| |exact H].
  intros Hp; apply ray_coefficients_rel; [apply (rel_zero _ _ _ (Fp_rel _ Hp))|].
  exact (native_jacobian_rel Qalg (Fpalg _) (Rp _) (Fp_rel _ Hp) (S N) ls rays).
Qed.
